import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isAmazonTrustServicesUrl, isValidSigningCertUrl, isValidSubscribeUrl } from '../../src/mail/sns-urls.ts';

describe('SigningCertURL pattern', () => {
  for (const url of [
    'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-9c6465fa7f48f5cacd23014631ec1136.pem',
    'https://sns.eu-central-2.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem',
    'https://sns.us-gov-west-1.amazonaws.com/SimpleNotificationService-abc.pem',
    'https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-abc.pem',
    'https://sns.ap-southeast-4.amazonaws.com:443/SimpleNotificationService-abc.pem',
  ]) {
    it(`accepts ${url}`, () => assert.equal(isValidSigningCertUrl(url), true));
  }
  for (const url of [
    'https://sns.us-east-1.amazonaws.com.evil.com/SimpleNotificationService-abc.pem',
    'https://evilsns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem',
    'https://sns.us-east-1.amazonaws.com@evil.com/SimpleNotificationService-abc.pem',
    'https://user@sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem',
    'https://sns.s3-us-east-1.amazonaws.com/SimpleNotificationService-abc.pem',
    'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-x.pem?y',
    'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-x.pem#y',
    'https://sns.us-east-1.amazonaws.com/%2e%2e/SimpleNotificationService-x.pem',
    'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-x%2epem',
    'https://sns.us-east-1.amazonaws.com\\@evil.com/SimpleNotificationService-x.pem',
    'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-x.pem ',
    ' https://sns.us-east-1.amazonaws.com/SimpleNotificationService-x.pem',
    'http://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem',
    'https://sns.us-east-1.amazonaws.com:8443/SimpleNotificationService-abc.pem',
    'https://sns.us-east-1.amazonaws.com:0443/SimpleNotificationService-abc.pem',
    'https://SNS.US-EAST-1.AMAZONAWS.COM/SimpleNotificationService-abc.pem',
    'https://sns.us-east-1.amazonaws.com/other/SimpleNotificationService-abc.pem',
    'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-.pem',
    'https://sns.us-east-1.amazonaws.com.cn/SimpleNotificationService-abc.pem',
    'https://sns.amazonaws.com/SimpleNotificationService-abc.pem',
    'https://sns.us-east-1.amazonaws.com./SimpleNotificationService-abc.pem',
  ]) {
    it(`refuses ${JSON.stringify(url)}`, () => assert.equal(isValidSigningCertUrl(url), false));
  }
});

describe('SubscribeURL pattern', () => {
  it('accepts the documented shape', () => {
    assert.equal(
      isValidSubscribeUrl(
        'https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic&Token=2336412f37fb687f5d51e6e2425c464d',
      ),
      true,
    );
  });
  for (const url of [
    'https://sns.us-west-2.amazonaws.com/?Action=Unsubscribe&Token=1',
    'https://sns.us-west-2.amazonaws.com/path?Action=ConfirmSubscription&Token=1',
    'https://sns.us-west-2.amazonaws.com.evil.com/?Action=ConfirmSubscription&Token=1',
    'https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&Token=%41',
    'https://sns.us-west-2.amazonaws.com:8443/?Action=ConfirmSubscription&Token=1',
    'http://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&Token=1',
    'https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&Token=1#frag',
  ]) {
    it(`refuses ${url}`, () => assert.equal(isValidSubscribeUrl(url), false));
  }
});

describe('AIA intermediate hosts', () => {
  it('only Amazon Trust Services hosts', () => {
    assert.equal(isAmazonTrustServicesUrl('http://crt.r2m02.amazontrust.com/r2m02.cer'), true);
    assert.equal(isAmazonTrustServicesUrl('http://crt.r2m02.amazontrust.com.evil.com/r2m02.cer'), false);
    assert.equal(isAmazonTrustServicesUrl('http://evil.com/crt.r2m02.amazontrust.com/r2m02.cer'), false);
    assert.equal(isAmazonTrustServicesUrl('http://crt.r2m02.amazontrust.com:8080/r2m02.cer'), false);
  });
});
